pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {
    lo.max(x.min(hi))
}
