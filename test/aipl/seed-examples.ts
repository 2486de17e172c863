/**
 * The templates of seed 002 (AIPL 0.1), copied verbatim from its code blocks, so the golden tests run
 * where the seed is not at hand. seed-examples.test.ts checks the copies against the seed when it is.
 */

/** "Update State Example". */
export const UPDATE_EXAMPLE = `(# Examples of setting the chat state)

(# if the character has children then figure out what the wife's name is)
((userInfo.children > 0) ? "What is {char}'s wife's name?" ->
userInfo.wifeName)

(# always attempt to figure out where the user went to school)
(= "Where did {user} go to school?" -> userInfo.school)
`;

/** "Basic Prompt Template Example". */
export const BASIC_EXAMPLE = `{char}'s mood is {mood.recent:happy enough} and they currently have
{cookie.count:12} cookies. They are aware of the following dangers:
{environment.dangers}

{char} is aware that the current date is {date} and the current time is
{time}
`;

/** "Advanced Prompt Template Example". */
export const ADVANCED_EXAMPLE = `This sentence will always be rendered.
(# this is a comment that will not be rendered)
((isAngryConversation({conversation.summary}) &&
isCalmCharacter({userInfo.personality})
This will only be rendered if the condition above is true
The LLM will evaluate the above 'soft code' functions and provide a
boolean response
  ((isEvening("The current time is {time}")
    This nested sentence will only be rendered if both conditions are true
    (# attempt to figure out where the user went to school this will only
be updated if both conditions above are true)
    (= "Where did {user} go to school?" -> userInfo.school)
  )
)
This sentence will also always be rendered
(# This will update the state constantly as the conversation progresses if
the expression is true)
((userInfo.children > 0) ? "What is {char}'s wife's name?" ->
userInfo.wifeName)
(# note that userInfo.children will be coerced into a number by the LLM as
best as it is able)
`;

/** The two forms the seed gives for updates, with placeholders where a question and a name go. */
export const UPDATE_FORMS = [
  `(expression ? question -> identifier)
`,
  `(= question -> identifier)
`,
];
