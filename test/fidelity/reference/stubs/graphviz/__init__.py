"""A stand-in for the `graphviz` package, which AutoGRAMS imports only to draw graphs."""


class Digraph:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("drawing is not part of these tests")
