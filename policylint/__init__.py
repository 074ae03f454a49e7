"""policylint: an offline linter for Gateway API Policy Attachment manifests."""

__version__ = "0.1.0"

# Rule docs are published from the repository; helpUri links point at the release tag
# `v{__version__}`, not at `main`, so a report keeps linking to the text of the rules that
# produced it after the docs move on.
HOMEPAGE = "https://github.com/policylint/policylint"
DOCS_URL = f"{HOMEPAGE}/blob/v{__version__}/rules"
