pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {
    if hi < lo || x < lo {
        return lo;
    }
    if x > hi { hi } else { x }
}
