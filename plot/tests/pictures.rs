//! The pictures as a reader sees them: each PNG is decoded and its pixels inspected. Expected
//! colours are viridis's published end points (#440154 and #fde725), not this crate's table.

use acc_plot::{heat_map, line_plot, PlotError, Values};

const DARKEST: [u8; 3] = [0x44, 0x01, 0x54];
const BRIGHTEST: [u8; 3] = [0xfd, 0xe7, 0x25];
/// matplotlib's first line colour.
const LINE: [u8; 3] = [0x1f, 0x77, 0xb4];

struct Image {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Image {
    fn decode(bytes: &[u8]) -> Image {
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().expect("a PNG header");
        let mut rgb = vec![0; reader.output_buffer_size().expect("a size")];
        let info = reader.next_frame(&mut rgb).expect("a PNG frame");
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        rgb.truncate(info.buffer_size());
        Image {
            width: info.width as usize,
            height: info.height as usize,
            rgb,
        }
    }

    fn pixel(&self, x: usize, y: usize) -> [u8; 3] {
        let at = (y * self.width + x) * 3;
        [self.rgb[at], self.rgb[at + 1], self.rgb[at + 2]]
    }

    /// The largest 4-connected region of pixels of exactly `colour`: (pixel count, bounding
    /// box as x0, y0, x1, y1 inclusive).
    fn largest_region(&self, colour: [u8; 3]) -> (usize, [usize; 4]) {
        let mut seen = vec![false; self.width * self.height];
        let mut best = (0, [0; 4]);
        for start in 0..self.width * self.height {
            if seen[start] || self.pixel(start % self.width, start / self.width) != colour {
                continue;
            }
            seen[start] = true;
            let mut stack = vec![start];
            let (mut count, mut bbox) = (0, [usize::MAX, usize::MAX, 0, 0]);
            while let Some(i) = stack.pop() {
                let (x, y) = (i % self.width, i / self.width);
                count += 1;
                bbox = [
                    bbox[0].min(x),
                    bbox[1].min(y),
                    bbox[2].max(x),
                    bbox[3].max(y),
                ];
                let mut visit = |nx: usize, ny: usize| {
                    let j = ny * self.width + nx;
                    if !seen[j] && self.pixel(nx, ny) == colour {
                        seen[j] = true;
                        stack.push(j);
                    }
                };
                if x > 0 {
                    visit(x - 1, y);
                }
                if y > 0 {
                    visit(x, y - 1);
                }
                if x + 1 < self.width {
                    visit(x + 1, y);
                }
                if y + 1 < self.height {
                    visit(x, y + 1);
                }
            }
            if count > best.0 {
                best = (count, bbox);
            }
        }
        best
    }
}

#[test]
fn a_heat_map_puts_the_minimum_darkest_and_the_maximum_brightest() {
    // Row 0 is [0, 1], row 1 is [2, 3]: the minimum is the top-left cell, the maximum the
    // bottom-right one.
    let png = heat_map(Values::F64(&[0.0, 1.0, 2.0, 3.0]), 2, 2).unwrap();
    let image = Image::decode(&png.bytes);
    assert_eq!(
        (image.width, image.height),
        (png.width as usize, png.height as usize)
    );
    let (dark_count, dark) = image.largest_region(DARKEST);
    let (bright_count, bright) = image.largest_region(BRIGHTEST);
    // Each is a solid square cell, the two of one size, diagonal to each other and touching
    // at a corner.
    for (count, b) in [(dark_count, dark), (bright_count, bright)] {
        assert_eq!(
            count,
            (b[2] - b[0] + 1) * (b[3] - b[1] + 1),
            "a solid rectangle"
        );
        assert!(b[2] - b[0] > 100, "a big cell: {b:?}");
        assert_eq!(b[2] - b[0], b[3] - b[1], "square");
    }
    assert_eq!(dark_count, bright_count);
    assert_eq!(
        (dark[2] + 1, dark[3] + 1),
        (bright[0], bright[1]),
        "{dark:?} {bright:?}"
    );
    // The other two cells are neither end colour.
    let top_right = image.pixel(bright[0] + 10, dark[1] + 10);
    let bottom_left = image.pixel(dark[0] + 10, bright[1] + 10);
    for c in [top_right, bottom_left] {
        assert!(c != DARKEST && c != BRIGHTEST, "{c:?}");
    }
    // And the colour bar runs from the brightest at its top to the darkest at its bottom, to
    // the right of the cells.
    let bar_x = (bright[2] + 1..image.width)
        .find(|&x| image.pixel(x, bright[3]) == DARKEST)
        .expect("a colour bar beside the cells");
    let column: Vec<[u8; 3]> = (0..image.height).map(|y| image.pixel(bar_x, y)).collect();
    let top = column
        .iter()
        .position(|&c| c == BRIGHTEST)
        .expect("bright top");
    let bottom = column
        .iter()
        .rposition(|&c| c == DARKEST)
        .expect("dark bottom");
    assert!(top < bottom);
}

#[test]
fn every_element_type_draws() {
    let (w, h) = {
        let png = heat_map(Values::F32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 2, 3).unwrap();
        (png.width, png.height)
    };
    for values in [
        Values::I32(&[1, 2, 3, 4, 5, 6]),
        Values::I64(&[1, 2, 3, 4, 5, 6]),
        Values::Bool(&[0, 1, 0, 1, 1, 0]),
    ] {
        let png = heat_map(values, 2, 3).unwrap();
        let image = Image::decode(&png.bytes);
        assert_eq!((image.width as u32, image.height as u32), (w, h));
        assert!(image.largest_region(BRIGHTEST).0 > 1000);
    }
}

#[test]
fn nan_infinities_and_constants_draw() {
    let grey = acc_plot::MISSING;
    let png = heat_map(
        Values::F64(&[f64::NAN, f64::INFINITY, -f64::INFINITY, 1.0]),
        2,
        2,
    )
    .unwrap();
    let image = Image::decode(&png.bytes);
    assert!(image.largest_region(grey).0 > 10_000, "NaN is grey");
    assert!(
        image.largest_region(BRIGHTEST).0 > 10_000,
        "+inf is the top"
    );
    // A constant array: every cell the darkest colour, as in matplotlib.
    let png = heat_map(Values::I32(&[7; 6]), 3, 2).unwrap();
    let image = Image::decode(&png.bytes);
    let (count, b) = image.largest_region(DARKEST);
    assert_eq!(count, (b[2] - b[0] + 1) * (b[3] - b[1] + 1));
    assert!(b[3] - b[1] > 300, "all three rows: {b:?}");
    // Nothing finite at all.
    heat_map(Values::F64(&[f64::NAN; 4]), 2, 2).unwrap();
    line_plot(None, Values::F64(&[f64::NAN; 4])).unwrap();
    line_plot(None, Values::F64(&[3.0; 10])).unwrap();
    line_plot(None, Values::F64(&[-f64::MAX, f64::MAX, 0.0])).unwrap();
    line_plot(Some(Values::F64(&[1.0, 1.0])), Values::F64(&[0.0, 1.0])).unwrap();
}

#[test]
fn empty_arrays_are_errors() {
    assert_eq!(heat_map(Values::F64(&[]), 0, 3), Err(PlotError::Empty));
    assert_eq!(heat_map(Values::F64(&[]), 3, 0), Err(PlotError::Empty));
    assert_eq!(line_plot(None, Values::F64(&[])), Err(PlotError::Empty));
    assert_eq!(
        line_plot(Some(Values::F64(&[1.0])), Values::F64(&[1.0, 2.0])),
        Err(PlotError::Lengths { x: 1, y: 2 })
    );
}

#[test]
fn huge_arrays_draw_at_the_picture_size() {
    let (rows, cols) = (3000, 2000);
    let values: Vec<f32> = (0..rows * cols).map(|i| (i % 977) as f32).collect();
    let png = heat_map(Values::F32(&values), rows, cols).unwrap();
    assert!(
        png.height < 700 && png.width < 900,
        "{}x{}",
        png.width,
        png.height
    );
    Image::decode(&png.bytes);
    let y: Vec<f64> = (0..3_000_000).map(|i| f64::from(i % 1001)).collect();
    let png = line_plot(None, Values::F64(&y)).unwrap();
    Image::decode(&png.bytes);
}

/// The columns of the picture where the line is drawn, each with the middle row of its line
/// pixels.
fn line_trace(image: &Image) -> Vec<(f64, f64)> {
    (0..image.width)
        .filter_map(|x| {
            let rows: Vec<usize> = (0..image.height)
                .filter(|&y| image.pixel(x, y) == LINE)
                .collect();
            let mid = (*rows.first()? + *rows.last()?) as f64 / 2.0;
            Some((x as f64, mid))
        })
        .collect()
}

#[test]
fn a_straight_line_is_drawn_on_its_diagonal() {
    // y = 2x + 1 for x = 0..99: a rising straight line from the lower left to the upper right.
    let y: Vec<f64> = (0..100).map(|i| 2.0 * f64::from(i) + 1.0).collect();
    let png = line_plot(None, Values::F64(&y)).unwrap();
    let image = Image::decode(&png.bytes);
    let trace = line_trace(&image);
    assert!(
        trace.len() > image.width / 2,
        "the line spans the picture: {}",
        trace.len()
    );
    let (first, last) = (trace[0], trace[trace.len() - 1]);
    assert!(
        last.1 < first.1 - image.height as f64 / 2.0,
        "rises: {first:?} {last:?}"
    );
    // Every traced point lies on the chord from the first to the last (within 3 pixels: the line is 2 wide).
    let slope = (last.1 - first.1) / (last.0 - first.0);
    for (x, row) in &trace {
        let expected = first.1 + slope * (x - first.0);
        assert!(
            (row - expected).abs() <= 3.0,
            "({x}, {row}) off the line by {}",
            row - expected
        );
    }
    // plot(x, y) of the same points mirrored in x falls instead.
    let x: Vec<f64> = (0..100).map(|i| -f64::from(i)).collect();
    let png = line_plot(Some(Values::F64(&x)), Values::F64(&y)).unwrap();
    let trace = line_trace(&Image::decode(&png.bytes));
    assert!(trace[trace.len() - 1].1 > trace[0].1 + 200.0, "falls");
}
