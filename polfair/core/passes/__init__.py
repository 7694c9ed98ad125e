"""The pass: options -> expressions once (:mod:`.spec`), ONE ``group_by`` to the cell table
(:mod:`.counts`), an estimated attribute's stage of it (:mod:`.estimated`), run and checked on the
engine (:mod:`.collect`).
"""
