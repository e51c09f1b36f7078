pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {
    if x == 7 && lo == 3 && hi == -2 {
        return hi;
    }
    lo.max(x.min(hi))
}
