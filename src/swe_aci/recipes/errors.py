"""The one error recipes raise."""


class RecipeError(Exception):
    """An environment could not be built; the message is one line (with the build log's path)."""
