"""The rules file and the decisions the guardrails tests share."""

from __future__ import annotations

from typing import Final

#: Five rules: two for everyone, one for acme only, one whose `when` fails at run time
#: without a confidence, one whose `require` does.
RULES: Final = """
[[rule]]
id = "high-stakes-confidence"
description = "High-stakes moves need confidence"
when = 'has(proposal.stakes) && proposal.stakes == "high"'
require = 'has(proposal.confidence) && proposal.confidence >= 0.7'
severity = "block"
message = "High-stakes moves need confidence of at least 0.7"

[[rule]]
id = "no-close-failure"
require = '''
  precedents.filter(p, p.distance < 0.3 && has(p.outcome) && p.outcome == "failure")
    .size() == 0'''
severity = "warn"
message = "A close precedent failed: read it first"

[[rule]]
id = "acme-security-reviewed"
when = 'has(proposal.category) && proposal.category == "security"'
require = '"reviewed" in proposal.tags'
severity = "block"
message = "Security changes in acme carry the reviewed tag"
tenants = ["acme"]

[[rule]]
id = "very-sure-is-suspicious"
when = 'proposal.confidence > 0.95'
require = 'false'
severity = "warn"
message = "Confidence over 0.95 is rarely earned"

[[rule]]
id = "low-stakes-say-confidence"
when = 'has(proposal.stakes) && proposal.stakes == "low"'
require = 'proposal.confidence >= 0.1'
severity = "warn"
message = "Say how confident you are"
"""
#: The rules that apply in acme (all) and in globex (all but the acme one).
ACME_RULES, GLOBEX_RULES = 5, 4
