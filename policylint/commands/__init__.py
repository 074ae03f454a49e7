"""policylint/commands"""
