pub fn level(points: u32) -> u32 {
    let rounded: u32 = (points + 50) / 100;
    if rounded > 10 {
        return 10;
    }
    rounded
}
