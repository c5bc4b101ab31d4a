"""Text: segmentation and query statistics for mixed Chinese/English text (jieba for Han runs,
lower-cased words elsewhere), the stop words, and query entropy; ``bridge``, a Chinese-English dictionary
for cross-language recall; ``when`` and ``named_days``, what a question says about time, ``named_spans``, the
holidays, seasons and parts of a year it can name, and ``calendar_days``, the dates of movable holidays; ``marshal_cache``,
the parsed dictionaries kept between runs; ``pos``, jieba's part-of-speech tags at a bounded cost. No database, no model.
May import: ``errors``.
"""
