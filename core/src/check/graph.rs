//! Graph level (semantics spec §1.3, §1.6): names, value infos, initializers, then every
//! node. Scoping and SSA come from name resolution, run once for the whole model.

use std::collections::HashSet;

use super::{Checker, GraphRole, Opsets};
use crate::diagnostic::Anchor;
use crate::ir::{GraphId, Str, TypeValue, ValueInfo};

impl Checker<'_> {
    pub(super) fn graph(&mut self, id: GraphId, role: GraphRole, opsets: &Opsets) {
        let model = self.model;
        let g = &model.graphs[id];
        if g.name.as_ref().is_none_or(Str::is_empty) {
            self.error("missing-graph-name", Anchor::Graph(id), "the graph has no name (every graph needs one)");
        }
        for (i, v) in g.inputs.iter().enumerate() {
            self.value_info(v, role, Anchor::GraphInput(id, i), "input");
        }
        for (i, v) in g.outputs.iter().enumerate() {
            self.value_info(v, role, Anchor::GraphOutput(id, i), "output");
        }
        let input_names: HashSet<&Str> = g.inputs.iter().filter_map(|v| v.name.as_ref()).collect();
        for (i, &t) in g.initializers.iter().enumerate() {
            let anchor = Anchor::Initializer(id, i);
            match &model.tensors[t].name {
                Some(name) if !name.is_empty() => {
                    if self.ir_version <= 3 && self.ir_version > 0 && !input_names.contains(name) {
                        self.error(
                            "initializer-not-input",
                            anchor,
                            format!(
                                "initializer '{name}' is not a graph input (IR version 3 and earlier need it to be)"
                            ),
                        );
                    }
                }
                _ => self.error("missing-initializer-name", anchor, "the initializer has no name"),
            }
            self.tensor(t, anchor);
        }
        for (i, sparse) in g.sparse_initializers.iter().enumerate() {
            let anchor = Anchor::SparseInitializer(id, i);
            let named = sparse.values.and_then(|v| model.tensors[v].name.as_ref()).is_some_and(|n| !n.is_empty());
            if !named {
                self.error("missing-initializer-name", anchor, "the sparse initializer's values have no name");
            }
            self.sparse_tensor(sparse, anchor);
        }
        for &n in &g.nodes {
            self.node(n, role, opsets);
        }
    }

    /// A graph input or output: a name always; in the main graph a complete type too.
    fn value_info(&mut self, v: &ValueInfo, role: GraphRole, anchor: Anchor, what: &str) {
        if v.name.as_ref().is_none_or(Str::is_empty) {
            self.error("missing-value-name", anchor, format!("the graph {what} has no name"));
        }
        if role != GraphRole::Main {
            return;
        }
        let name = v.name.as_ref().map_or_else(String::new, Str::escaped);
        let missing = match v.ty.as_ref().and_then(|t| t.value.as_ref()) {
            None => Some("a type"),
            Some(TypeValue::Tensor(t) | TypeValue::SparseTensor(t)) => {
                if t.elem_type.is_none() {
                    Some("an element type")
                } else if t.shape.is_none() {
                    Some("a shape (a main-graph tensor needs a rank; `[]` in text is unknown rank)")
                } else {
                    None
                }
            }
            Some(TypeValue::Sequence(elem) | TypeValue::Optional(elem)) => elem.is_none().then_some("an element type"),
            Some(TypeValue::Map { key_type, value_type }) => {
                (key_type.is_none() || value_type.is_none()).then_some("a key and a value type")
            }
            Some(TypeValue::Opaque { name, .. }) => {
                name.as_deref().is_none_or(Str::is_empty).then_some("an opaque name")
            }
        };
        if let Some(missing) = missing {
            self.error("incomplete-type", anchor, format!("main-graph {what} '{name}' needs {missing}"));
        }
    }
}
