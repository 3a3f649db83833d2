//! The benchmark's correctness check on real servers: every benchmark statement returns the
//! same result set on a stock server and on one with rheap (both at tmp_table_size 16G, where
//! HEAP and rheap differ most), and each workload makes the temp tables it is meant to measure.

use rheap_bench::check;
use rheap_bench::schema::Schema;
use rheap_bench::system::{Configuration, Rheap, Size, StockHeap};
use rheap_bench::workload;
use std::sync::Arc;

#[test]
fn every_statement_returns_the_same_result_on_every_system() -> anyhow::Result<()> {
    let schema = Schema::standard();
    let size = Size("16G");
    let (stock, rheap) = std::thread::scope(|s| {
        let stock = s.spawn(|| Configuration::start(Box::new(StockHeap), size, &schema));
        let rheap = s.spawn(|| Configuration::start(Box::new(Rheap), size, &schema));
        (stock.join().unwrap(), rheap.join().unwrap())
    });
    let configs = [stock?, rheap?];
    let iterations: Vec<Arc<Vec<String>>> = workload::ALL
        .iter()
        .map(|w| Arc::new(w.iteration(&schema)))
        .collect();
    let checks = check::check(&configs, workload::ALL, &iterations)?;
    check::validate(&checks, workload::ALL, &configs)?;
    insta::assert_json_snapshot!(checks);
    Ok(())
}
