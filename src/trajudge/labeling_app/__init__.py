"""trajudge.labeling_app"""
