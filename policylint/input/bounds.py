"""The bounds on hostile input that loading holds every file to (rules/PL007-input-resource-limit.md).

Read as `bounds.MAX_DEPTH` where they are checked, never copied: a program embedding policylint,
or a test, changes them here, and the parse cache keys its entries by `limits()`.
"""

from __future__ import annotations

# Bounds on hostile input. No file may hang policylint or take memory out of proportion to
# what it really holds; each bound below is reported as a located PL007 finding (PL001 for
# the integer range) and costs at most the document or file it is found in. None is reached
# by real manifests: files of the generated benchmark corpus (benchmarks/) hold 100
# documents, at most 836 nodes per document and 9,000 per file, and no alias. They are module
# constants so that a program embedding policylint, or a test, can change them; the parse
# cache keys its entries by `limits()`. rules/PL007-input-resource-limit.md lists them too.

# Bytes read from one file; a larger file is refused unread.
MAX_FILE_BYTES = 64 * 1024 * 1024
# Nesting of collections in one document, counted once aliases are expanded. libyaml composes
# recursively in C, so a document nested 100,000 levels deep would crash the interpreter: the
# written depth is checked with the event parser (which does not recurse) before composing,
# whenever the text could possibly be that deep; the depth aliases add, before converting.
MAX_DEPTH = 256
# Documents in one file. Each costs a parser pass, and an object or a finding: two million
# `{}` documents in a 14 MB file took a minute and 7 GB. The rest of the file is skipped.
MAX_DOCUMENTS = 10_000
# Documents skipped in one file for a syntax error or a limit. Parsing resumes at the next
# `---` after each, with a new parser (about 0.3 ms): a file of broken documents would make
# ten thousand of them. The rest of the file is skipped.
MAX_SKIPPED_DOCUMENTS = 1_000
# Nodes written in one document. The composer builds a Python node of about 300 bytes per YAML
# node before anything can look at the document (an 8 MB flow list `[1,1,...]` took 1.2 GB), so
# a document that could be larger is counted with the event parser first and skipped unread.
MAX_DOCUMENT_NODES = 250_000
# Nodes written in one file, all documents together: what the loaded data keeps of it.
MAX_FILE_NODES = 2_000_000
# Nodes and scalar characters that YAML aliases add to one file once expanded. The loaded data
# shares what aliases repeat, but whatever walks or serialises it later (rules, the parse cache,
# explain) sees it expanded: a 1 KB "billion laughs" file expands to 10^12 nodes, and one long
# string aliased 250,000 times to gigabytes.
MAX_EXPANDED_NODES = 250_000
MAX_EXPANDED_CHARS = 8 * 1024 * 1024
# Integers, whatever their form (decimal, 0x, 0o, 0b, sexagesimal, `_` separators, a sign): the
# Kubernetes API stores integer fields as int64. One that does not fit is kept as its text and
# reported (PL001); no larger int is ever built (CPython refuses to print one of more than
# 4,300 digits, and rules print numbers in their messages).
INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
# The text that stands for a mapping key that is a collection (`{[1, 2]: x}`): at most this long.
MAX_KEY_TEXT = 64
_SIZE_CAP = 1 << 60  # expanded sizes saturate here: a bomb's true size can have thousands of digits


def limits() -> tuple[int, ...]:
    """Every bound above, as it is now: what loading produces depends on them."""
    return (
        MAX_FILE_BYTES,
        MAX_DEPTH,
        MAX_DOCUMENTS,
        MAX_SKIPPED_DOCUMENTS,
        MAX_DOCUMENT_NODES,
        MAX_FILE_NODES,
        MAX_EXPANDED_NODES,
        MAX_EXPANDED_CHARS,
        INT_MIN,
        INT_MAX,
        MAX_KEY_TEXT,
    )
