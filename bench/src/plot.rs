//! The plot: statements/s against clients, one panel per workload, one line per configuration.

use crate::report::Report;
use anyhow::{anyhow, Result};
use plotters::prelude::*;
use std::path::Path;

const COLOURS: [RGBColor; 6] = [
    RGBColor(228, 26, 28),
    RGBColor(255, 127, 0),
    RGBColor(55, 126, 184),
    RGBColor(77, 175, 74),
    RGBColor(152, 78, 163),
    RGBColor(166, 86, 40),
];

pub fn svg(report: &Report, path: &Path) -> Result<()> {
    let panels = report.workloads.len().max(1);
    let cols = 2;
    let rows = panels.div_ceil(cols);
    let root = SVGBackend::new(path, (1100, 320 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let clients = &report.method.clients;
    let x_range = -0.3..(clients.len() as f64 - 0.7);
    for (area, w) in root
        .split_evenly((rows, cols))
        .iter()
        .zip(&report.workloads)
    {
        let max = w
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().map(|c| c.stmt_per_s))
            .fold(1.0, f64::max);
        let mut chart = ChartBuilder::on(area)
            .caption(&w.name, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(32)
            .y_label_area_size(64)
            .build_cartesian_2d(x_range.clone(), 0.0..max * 1.15)
            .map_err(|e| anyhow!("{e}"))?;
        let label = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                clients
                    .get(i as usize)
                    .map(|c| c.to_string())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_labels(clients.len())
            .x_label_formatter(&label)
            .x_desc("clients")
            .y_desc("statements/s")
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(|e| anyhow!("{e}"))?;
        for (c, config) in report.configurations.iter().enumerate() {
            let colour = COLOURS[c % COLOURS.len()];
            let points: Vec<(f64, f64)> = w
                .rows
                .iter()
                .enumerate()
                .map(|(k, r)| (k as f64, r.cells[c].stmt_per_s))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
                .map_err(|e| anyhow!("{e}"))?
                .label(config.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(|e| anyhow!("{e}"))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| anyhow!("{e}"))?;
    }
    root.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}
