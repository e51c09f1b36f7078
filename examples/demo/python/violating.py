def level(points):
    return min(round(points / 100), 10)
