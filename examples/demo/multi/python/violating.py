def clamp(x, lo, hi):
    return min(hi, max(x, lo))
