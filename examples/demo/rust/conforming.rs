pub fn level(points: u32) -> u32 {
    let hundreds: u32 = points / 100;
    if hundreds > 10 {
        10
    } else {
        hundreds
    }
}
