"""A stand-in for `pkg_resources`: AutoGRAMS asks it which `openai` it runs on (a 1.x one here)."""


class _Distribution:
    version = "1.0.0"


def get_distribution(name):
    return _Distribution()
