"""A reference model of the eligibility rules and the non-ranking parts of search and delivery.

Written from the documented behaviour (docs/sql-reference.md, docs/decisions.md),
never from the SQL: plain
data classes and plain loops, slow and obviously right. tests/test_differential.py
builds random worlds through the public SQL API and through this model and
compares what each says a search returns.

Modules:

``world``        the state: accounts, conversations, memberships, messages, proofs, runs
``ops``          the operations of a scenario (one per SQL surface call) and World.apply
``eligibility``  who may see what: perspective, audience, lineage, alive, context
``search``       terms, filters, exclusion counts, neighbours, budget admission
``delivery``     the delivery check: proofs relied on, check_delivery's reasons
``scenarios``    hypothesis strategies producing valid scenarios

The hypothesis profiles ("ci", "deep") live in tests/conftest.py; docs/testing.md
says how to run them and what the model does not cover.
"""
