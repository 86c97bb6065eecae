"""The report as titled sections every renderer shows: the unit (_section), numbers as printed
(_numbers), the sections (_sections, _sections_categorical), the plain-language summary
(_summary), the alignment sections (_alignment, _alignment_choice). Public names are exported by
:mod:`trajudge.report`."""
