"""policylint: an offline linter for Gateway API Policy Attachment manifests."""

__version__ = "0.1.0"

# Rule docs are published from the repository; helpUri links point here.
DOCS_URL = "https://github.com/policylint/policylint/blob/main/rules"
