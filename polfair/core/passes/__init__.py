"""The pass: options -> expressions once (:mod:`.spec`), ONE ``group_by`` to the cell table
(:mod:`.counts`), run and checked on the engine (:mod:`.collect`).
"""
