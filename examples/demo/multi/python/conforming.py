def clamp(x, lo, hi):
    m = x if x < hi else hi
    return m if m > lo else lo
