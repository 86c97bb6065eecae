"""trajudge.rules"""
