-- A mark in the site's analytics for every note, so notes can be read beside traffic.
CREATE TABLE IF NOT EXISTS {db:Identifier}.plugin_notes_marks
(
  ts DateTime64(3, 'UTC'),
  site_id UUID,
  note_id UUID
)
ENGINE = MergeTree
ORDER BY (site_id, ts);
