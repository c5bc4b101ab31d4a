-- 0006: reserved for issue 18 (trust boundaries). This placeholder only keeps the numbering without gaps on the
-- issue-19 branch; the lead replaces it with issue 18's 0006 when merging (it changes nothing).
SELECT 1;
