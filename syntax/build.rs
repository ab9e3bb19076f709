//! Generates the LR(1) parser from `src/grammar.lalrpop`.

fn main() {
    if let Err(err) = lalrpop::Configuration::new().use_cargo_dir_conventions().process() {
        panic!("LALRPOP failed on the grammar: {err}");
    }
}
