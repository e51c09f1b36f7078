def level(points):
    return min(points // 100, 10)
