"""policylint/semantics/effective"""
