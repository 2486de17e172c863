/**
 * Function words: the words of a query that say how it is asked, not what about ("where is the deploy
 * key"). They are left out of the words side's query and of how much of a query a memory covers, so
 * that sharing "is" or "the" with a query never makes a memory a match. Memories keep them in the
 * index: a stored words index stays valid, and a query of nothing else finds nothing by words. Pure.
 */

/**
 * English function words, lowercase: articles, pronouns, auxiliaries, the commonest prepositions and
 * conjunctions, question words. Words that can be what a query is about (only, not, over, up) are not.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  `a am an and are as at be been being both but by can could did do does doing for from had has have
  having he her hers herself him himself his how i if in into is it its itself me my myself of on or
  our ours ourselves she should so than that the their theirs them themselves then there these they
  this those to was we were what when where which while who whom why will with would you your yours
  yourself yourselves`.split(/\s+/),
);

/** Whether `term` (lowercase) is a function word. */
export function isStopWord(term: string): boolean {
  return STOP_WORDS.has(term);
}
