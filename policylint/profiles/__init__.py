"""policylint/profiles"""
