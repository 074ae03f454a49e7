"""policylint/input"""
