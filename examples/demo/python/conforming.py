def level(points):
    hundreds = points // 100
    return 10 if hundreds > 10 else hundreds
