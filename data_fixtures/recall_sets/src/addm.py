import sys
def add(path, sess, lines):
    L = open(path, encoding='utf-8').read().split('\n')
    i = next(k for k, l in enumerate(L) if l.startswith('S ' + sess))
    j = i + 1
    while j < len(L) and L[j].startswith('M '):
        j += 1
    L[j:j] = lines
    open(path, 'w', encoding='utf-8').write('\n'.join(L))
def rep(path, old, new):
    s = open(path, encoding='utf-8').read()
    assert s.count(old) == 1, (path, old)
    open(path, 'w', encoding='utf-8').write(s.replace(old, new))
