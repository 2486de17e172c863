"""A stand-in for the `openai` package, for running AutoGRAMS 0.1 in meta-agent's tests.

It answers from the same rules file as meta-agent's scripted provider (--provider scripted), and
records every request, so the test can compare the prompts AutoGRAMS sends with meta-agent's.
"""
import json
import os
import re

CALLS = []


class _Script:
    def __init__(self, path):
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        self.rules = [dict(rule, used=0) for rule in data["rules"]]
        self.default = data.get("default")

    def reply(self, role, prompt):
        for rule in self.rules:
            if rule.get("role", role) == role and _matches(rule.get("match"), prompt):
                replies = rule["reply"] if isinstance(rule["reply"], list) else [rule["reply"]]
                text = replies[min(rule["used"], len(replies) - 1)]
                rule["used"] += 1
                return text
        if self.default is not None:
            return self.default
        raise RuntimeError("the script has no rule for the %s prompt %r" % (role, prompt[:200]))


def _matches(match, prompt):
    if match is None:
        return True
    regex = re.fullmatch(r"/(.+)/([a-z]*)", match, re.S)
    if not regex:
        return match in prompt
    flags = 0
    for flag, value in (("i", re.I), ("s", re.S), ("m", re.M)):
        if flag in regex.group(2):
            flags |= value
    return re.search(regex.group(1), prompt, flags) is not None


_SCRIPT = None


def _script():
    global _SCRIPT
    if _SCRIPT is None:
        _SCRIPT = _Script(os.environ["AUTOGRAMS_STUB_SCRIPT"])
    return _SCRIPT


class _Message:
    def __init__(self, content):
        self.content = content


class _Choice:
    def __init__(self, content):
        self.message = _Message(content)


class _Response:
    def __init__(self, texts):
        self.choices = [_Choice(text) for text in texts]


class _Completions:
    def create(self, model, messages, **kwargs):
        # AutoGRAMS' classifier asks for one token with a logit bias; its chatbot and userbot do not.
        role = "classifier" if kwargs.get("max_tokens") == 1 and "logit_bias" in kwargs else "chatbot"
        prompt = "\n\n".join(message["content"] for message in messages)
        text = _script().reply(role, prompt)
        CALLS.append({"role": role, "messages": messages, "temperature": kwargs.get("temperature"),
                      "max_tokens": kwargs.get("max_tokens"), "reply": text})
        return _Response([text] * kwargs.get("n", 1))


class _Chat:
    def __init__(self):
        self.completions = _Completions()


class OpenAI:
    def __init__(self, api_key=None, **kwargs):
        self.chat = _Chat()
