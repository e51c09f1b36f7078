pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {
    hi.min(x.max(lo))
}
