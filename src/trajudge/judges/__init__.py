"""trajudge.judges"""
