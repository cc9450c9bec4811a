-- Revert history-search:_index_message from pg: the retired function again, as 0.4.0 had it.
\ir ../deploy/_index_message@v0.4.0.sql
