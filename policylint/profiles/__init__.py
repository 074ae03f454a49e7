"""policylint/profiles"""


class ProfileError(Exception):
    """A profile file that does not validate (exit code 2). Here, not in `registry`, so that a
    command catches it without importing the profiles' machinery."""
