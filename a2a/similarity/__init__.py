"""Structural similarity of decisions: cstp.findSimilarDecisions (tags, category, stakes)."""
