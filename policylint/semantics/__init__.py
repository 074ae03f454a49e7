"""policylint/semantics"""
