"""policylint/k8s"""
