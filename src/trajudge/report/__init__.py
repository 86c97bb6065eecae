"""trajudge.report"""
