-- A trajudge store at schema version 1, written by trajudge's own Store (commit 03e757f, the
-- last with version 1) and dumped with sqlite3 .dump: 2 trajectories, 3 judgments (one error).
-- tests/store/test_migrations.py upgrades it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_migrations (
	version INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	applied_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (version)
);
INSERT INTO schema_migrations VALUES(1,'initial schema','2026-11-30T22:08:11.357045+00:00');
CREATE TABLE datasets (
	name VARCHAR(200) NOT NULL, 
	created_at VARCHAR(40) NOT NULL, 
	source TEXT, 
	source_sha256 VARCHAR(64), 
	fmt VARCHAR(40), 
	PRIMARY KEY (name)
);
INSERT INTO datasets VALUES('ds','2026-11-30T22:08:11.368147+00:00',NULL,NULL,NULL);
CREATE TABLE label_history (
	id INTEGER NOT NULL, 
	label_id INTEGER NOT NULL, 
	value FLOAT, 
	criteria TEXT, 
	note TEXT, 
	unsure BOOLEAN NOT NULL, 
	skipped BOOLEAN NOT NULL, 
	changed_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE trajectories (
	dataset VARCHAR(200) NOT NULL, 
	id VARCHAR(400) NOT NULL, 
	seq INTEGER NOT NULL, 
	task_id VARCHAR(400) NOT NULL, 
	trial INTEGER NOT NULL, 
	intent VARCHAR(200), 
	outcome BOOLEAN, 
	n_steps INTEGER NOT NULL, 
	sha256 VARCHAR(64) NOT NULL, 
	data TEXT NOT NULL, 
	PRIMARY KEY (dataset, id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE, 
	CONSTRAINT uq_traj_task_trial UNIQUE (dataset, task_id, trial)
);
INSERT INTO trajectories VALUES('ds','a-0',1,'a',0,NULL,0,1,'34a8815522e474134caf1783d5e0351b95db6a2a4f7c6d6cf29183132446031e','{"files_after":null,"files_before":null,"final_answer":null,"id":"a-0","input":"help","intent":null,"metadata":{},"outcome":false,"steps":[{"approved":null,"args":{},"call_id":null,"error":null,"latency_ms":null,"ok":true,"output":null,"tokens":null,"tool":"search"}],"task_id":"a","trial":0,"usage":{"completion_tokens":null,"cost_usd":null,"latency_s":null,"prompt_tokens":null,"turns":null}}');
INSERT INTO trajectories VALUES('ds','a-1',2,'a',1,NULL,1,1,'903d193a54be4e5541d98c961a2a7118e550fca2a6a4b0139dea83da5730c88a','{"files_after":null,"files_before":null,"final_answer":null,"id":"a-1","input":"help","intent":null,"metadata":{},"outcome":true,"steps":[{"approved":null,"args":{},"call_id":null,"error":null,"latency_ms":null,"ok":true,"output":null,"tokens":null,"tool":"search"}],"task_id":"a","trial":1,"usage":{"completion_tokens":null,"cost_usd":null,"latency_s":null,"prompt_tokens":null,"turns":null}}');
CREATE TABLE task_specs (
	dataset VARCHAR(200) NOT NULL, 
	task_id VARCHAR(400) NOT NULL, 
	data TEXT NOT NULL, 
	PRIMARY KEY (dataset, task_id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE
);
CREATE TABLE rule_results (
	dataset VARCHAR(200) NOT NULL, 
	trajectory_id VARCHAR(400) NOT NULL, 
	spec_sha256 VARCHAR(64) NOT NULL, 
	gates_passed BOOLEAN NOT NULL, 
	score FLOAT, 
	data TEXT NOT NULL, 
	PRIMARY KEY (dataset, trajectory_id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE
);
CREATE TABLE judgments (
	id INTEGER NOT NULL, 
	dataset VARCHAR(200) NOT NULL, 
	trajectory_id VARCHAR(400) NOT NULL, 
	other_id VARCHAR(400), 
	judge VARCHAR(200) NOT NULL, 
	rubric_id VARCHAR(200) NOT NULL, 
	rubric_version VARCHAR(64) NOT NULL, 
	model VARCHAR(300) NOT NULL, 
	mode VARCHAR(20) NOT NULL, 
	"order" VARCHAR(2) NOT NULL, 
	sample INTEGER NOT NULL, 
	score FLOAT, 
	verdict VARCHAR(40), 
	reasoning TEXT, 
	criteria TEXT, 
	raw TEXT, 
	prompt_tokens INTEGER, 
	completion_tokens INTEGER, 
	cost_usd FLOAT, 
	latency_s FLOAT, 
	cache_hit BOOLEAN NOT NULL, 
	error TEXT, 
	request_sha256 VARCHAR(64), 
	created_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE, 
	CONSTRAINT uq_judgment UNIQUE (dataset, trajectory_id, other_id, judge, rubric_version, "order", sample)
);
INSERT INTO judgments VALUES(1,'ds','a-0',NULL,'j','trajectory_reasonableness','0123456789abcdef','openai/old-model','pointwise','ab',0,4.0,'pass','fine',NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,'0000000000000000000000000000000000000000000000000000000000000000','2026-11-30T22:08:11.381129+00:00');
INSERT INTO judgments VALUES(2,'ds','a-1',NULL,'j','trajectory_reasonableness','0123456789abcdef','openai/old-model','pointwise','ab',0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,0,'APIConnectionError after 5 attempt(s): refused','0000000000000000000000000000000000000000000000000000000000000000','2026-11-30T22:08:11.392931+00:00');
INSERT INTO judgments VALUES(3,'ds','a-0','a-1','p','trajectory_preference','0123456789abcdef','openai/old-model','pairwise','ab',0,2.0,'tie','fine',NULL,NULL,NULL,NULL,NULL,NULL,0,NULL,'0000000000000000000000000000000000000000000000000000000000000000','2026-11-30T22:08:11.402341+00:00');
CREATE TABLE labels (
	id INTEGER NOT NULL, 
	dataset VARCHAR(200) NOT NULL, 
	trajectory_id VARCHAR(400) NOT NULL, 
	rubric_id VARCHAR(200) NOT NULL, 
	annotator VARCHAR(100) NOT NULL, 
	value FLOAT, 
	criteria TEXT, 
	note TEXT, 
	unsure BOOLEAN NOT NULL, 
	skipped BOOLEAN NOT NULL, 
	source VARCHAR(40) NOT NULL, 
	adjudication BOOLEAN NOT NULL, 
	created_at VARCHAR(40) NOT NULL, 
	updated_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE, 
	CONSTRAINT uq_label UNIQUE (dataset, trajectory_id, rubric_id, annotator, adjudication)
);
CREATE INDEX ix_label_history_label ON label_history (label_id);
CREATE INDEX ix_traj_dataset_seq ON trajectories (dataset, seq);
CREATE INDEX ix_judgments_dataset_judge ON judgments (dataset, judge);
CREATE INDEX ix_labels_dataset_annotator ON labels (dataset, annotator);
COMMIT;
