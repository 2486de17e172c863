"""A stand-in for `tiktoken`: one token per UTF-8 byte, enough for AutoGRAMS' length checks."""


class _Encoding:
    def encode(self, text):
        return list(text.encode("utf-8"))

    def decode(self, tokens):
        return bytes(tokens).decode("utf-8", errors="replace")


def encoding_for_model(model):
    return _Encoding()
