"""Text: segmentation and query statistics for mixed Chinese/English text (jieba for Han runs,
lower-cased words elsewhere), the stop words, and query entropy. No database, no model.
May import: ``errors``.
"""
