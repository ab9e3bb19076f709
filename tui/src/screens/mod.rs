//! The seven screens, each a [`Component`] that owns its cursor and caches, acts on the keys
//! that move and open its rows, and draws itself.

mod diagnostics;
mod flow;
mod graph;
mod model;
mod run;
mod tree;
mod values;

pub use diagnostics::DiagnosticsScreen;
pub use flow::FlowScreen;
pub use graph::GraphScreen;
pub use model::ModelScreen;
pub use run::RunScreen;
pub use tree::TreeScreen;
pub use values::ValuesScreen;

use std::path::PathBuf;

use crate::component::Component;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    Graph,
    Values,
    Tree,
    Diagnostics,
    Run,
    Model,
    Flow,
}

pub const SCREENS: [(Screen, &str); 7] = [
    (Screen::Graph, "Graph"),
    (Screen::Values, "Values"),
    (Screen::Tree, "Tree"),
    (Screen::Diagnostics, "Diagnostics"),
    (Screen::Run, "Run"),
    (Screen::Model, "Model"),
    (Screen::Flow, "Flow"),
];

/// Every screen's state, kept while another is shown.
#[derive(Debug)]
pub struct Screens {
    pub graph: GraphScreen,
    pub values: ValuesScreen,
    pub tree: TreeScreen,
    pub diagnostics: DiagnosticsScreen,
    pub run: RunScreen,
    pub model: ModelScreen,
    pub flow: FlowScreen,
}

impl Screens {
    pub fn new(scopes: usize, test_data: Option<PathBuf>) -> Screens {
        Screens {
            graph: GraphScreen::new(scopes),
            values: ValuesScreen::default(),
            tree: TreeScreen::default(),
            diagnostics: DiagnosticsScreen::default(),
            run: RunScreen::new(test_data),
            model: ModelScreen::default(),
            flow: FlowScreen::default(),
        }
    }

    pub fn get(&self, screen: Screen) -> &dyn Component {
        match screen {
            Screen::Graph => &self.graph,
            Screen::Values => &self.values,
            Screen::Tree => &self.tree,
            Screen::Diagnostics => &self.diagnostics,
            Screen::Run => &self.run,
            Screen::Model => &self.model,
            Screen::Flow => &self.flow,
        }
    }

    pub fn get_mut(&mut self, screen: Screen) -> &mut dyn Component {
        match screen {
            Screen::Graph => &mut self.graph,
            Screen::Values => &mut self.values,
            Screen::Tree => &mut self.tree,
            Screen::Diagnostics => &mut self.diagnostics,
            Screen::Run => &mut self.run,
            Screen::Model => &mut self.model,
            Screen::Flow => &mut self.flow,
        }
    }
}
