-- A version-7 store holding one aligned judge (its rule and trust threshold named 'cut'),
-- written by trajudge's own align_judge at commit c1dabda (tests/alignment/
-- test_escalation_queue.py::test_escalated_items_are_queued_first, pytest --basetemp) and
-- dumped with sqlite3's iterdump, keeping the schema, schema_migrations and aligned_judges.
BEGIN TRANSACTION;
CREATE TABLE aligned_judges (
	name VARCHAR(200) NOT NULL, 
	version INTEGER NOT NULL, 
	created_at VARCHAR(40) NOT NULL, 
	dataset VARCHAR(200) NOT NULL, 
	base_judge VARCHAR(200) NOT NULL, 
	config_sha256 VARCHAR(64), 
	sha256 VARCHAR(64) NOT NULL, 
	data TEXT NOT NULL, 
	PRIMARY KEY (name, version)
);
INSERT INTO "aligned_judges" VALUES('fake-aligned',1,'2026-12-04T20:10:57.921914+00:00','proj','fake','7f90bc0a8ea1a53f9055328f3e6b57deeadc7258305884c65343408bbdeca8d8','5a2f81a86dfa4a5d1533b506f6b9b3b93d9de4558ceeb367e81ff9daf59c0455','{"base_judge":"fake","choice":{"dev_cv":{"judge_kappa":0.4693140794223827,"kappa":{"calibrate":0.4693140794223827},"n_folds":5,"n_items":105,"n_tasks":35},"method":"calibrate","reason":"calibrate, the only cut method run: 5-fold cross-validated κ 0.47 against the judge''s 0.47 on the same 105 labelled dev items (35 tasks, whole tasks per fold), no better than the judge but no worse","refusal":null,"rows":[{"cv_kappa":0.4693140794223827,"decision":"saved","flag":null,"method":"calibrate","rule":"mean score >= 4.08"}]},"config_sha256":"7f90bc0a8ea1a53f9055328f3e6b57deeadc7258305884c65343408bbdeca8d8","dataset":"proj","escalated":[{"confidence":0.65,"item":"t00-0"},{"confidence":0.65,"item":"t00-1"},{"confidence":0.65,"item":"t01-0"},{"confidence":0.65,"item":"t01-2"},{"confidence":0.65,"item":"t02-1"},{"confidence":0.65,"item":"t02-2"},{"confidence":0.65,"item":"t03-0"},{"confidence":0.65,"item":"t03-1"},{"confidence":0.65,"item":"t03-2"},{"confidence":0.65,"item":"t04-0"},{"confidence":0.65,"item":"t04-1"},{"confidence":0.65,"item":"t05-0"},{"confidence":0.65,"item":"t05-2"},{"confidence":0.65,"item":"t06-1"},{"confidence":0.65,"item":"t06-2"},{"confidence":0.65,"item":"t08-0"},{"confidence":0.65,"item":"t08-1"},{"confidence":0.65,"item":"t09-0"},{"confidence":0.65,"item":"t09-2"},{"confidence":0.65,"item":"t10-1"},{"confidence":0.65,"item":"t10-2"},{"confidence":0.65,"item":"t11-0"},{"confidence":0.65,"item":"t11-1"},{"confidence":0.65,"item":"t11-2"},{"confidence":0.65,"item":"t13-0"},{"confidence":0.65,"item":"t13-2"},{"confidence":0.65,"item":"t14-1"},{"confidence":0.65,"item":"t14-2"},{"confidence":0.65,"item":"t15-0"},{"confidence":0.65,"item":"t15-1"},{"confidence":0.65,"item":"t15-2"},{"confidence":0.65,"item":"t16-0"},{"confidence":0.65,"item":"t16-1"},{"confidence":0.65,"item":"t18-1"},{"confidence":0.65,"item":"t18-2"},{"confidence":0.65,"item":"t20-0"},{"confidence":0.65,"item":"t20-1"},{"confidence":0.65,"item":"t21-0"},{"confidence":0.65,"item":"t21-2"},{"confidence":0.65,"item":"t22-1"},{"confidence":0.65,"item":"t22-2"},{"confidence":0.65,"item":"t25-0"},{"confidence":0.65,"item":"t25-2"},{"confidence":0.65,"item":"t28-0"},{"confidence":0.65,"item":"t28-1"},{"confidence":0.65,"item":"t29-0"},{"confidence":0.65,"item":"t29-2"},{"confidence":0.65,"item":"t30-1"},{"confidence":0.65,"item":"t30-2"},{"confidence":0.65,"item":"t31-0"},{"confidence":0.65,"item":"t31-1"},{"confidence":0.65,"item":"t31-2"},{"confidence":0.65,"item":"t33-0"},{"confidence":0.65,"item":"t33-2"},{"confidence":0.65,"item":"t39-0"},{"confidence":0.65,"item":"t39-1"},{"confidence":0.65,"item":"t39-2"},{"confidence":0.65,"item":"t40-0"},{"confidence":0.65,"item":"t40-1"},{"confidence":0.65,"item":"t47-0"},{"confidence":0.65,"item":"t47-1"},{"confidence":0.65,"item":"t47-2"},{"confidence":0.65,"item":"t48-0"},{"confidence":0.65,"item":"t48-1"},{"confidence":0.65,"item":"t49-0"},{"confidence":0.65,"item":"t49-2"},{"confidence":0.65,"item":"t50-1"},{"confidence":0.65,"item":"t50-2"},{"confidence":0.65,"item":"t51-0"},{"confidence":0.65,"item":"t51-1"},{"confidence":0.65,"item":"t51-2"},{"confidence":0.65,"item":"t54-1"},{"confidence":0.65,"item":"t54-2"},{"confidence":0.65,"item":"t55-0"},{"confidence":0.65,"item":"t55-1"},{"confidence":0.65,"item":"t55-2"},{"confidence":0.65,"item":"t56-0"},{"confidence":0.65,"item":"t56-1"},{"confidence":0.65,"item":"t57-0"},{"confidence":0.65,"item":"t57-2"},{"confidence":0.65,"item":"t58-1"},{"confidence":0.65,"item":"t58-2"},{"confidence":0.65,"item":"t59-0"},{"confidence":0.65,"item":"t59-1"},{"confidence":0.65,"item":"t59-2"},{"confidence":0.65,"item":"t60-0"},{"confidence":0.65,"item":"t60-1"},{"confidence":0.65,"item":"t63-0"},{"confidence":0.65,"item":"t63-1"},{"confidence":0.65,"item":"t63-2"},{"confidence":0.65,"item":"t64-0"},{"confidence":0.65,"item":"t64-1"},{"confidence":0.65,"item":"t65-0"},{"confidence":0.65,"item":"t65-2"},{"confidence":0.65,"item":"t68-0"},{"confidence":0.65,"item":"t68-1"},{"confidence":0.65,"item":"t69-0"},{"confidence":0.65,"item":"t69-2"},{"confidence":0.65,"item":"t70-1"},{"confidence":0.65,"item":"t70-2"},{"confidence":0.65,"item":"t74-1"},{"confidence":0.65,"item":"t74-2"},{"confidence":0.65,"item":"t76-0"},{"confidence":0.65,"item":"t76-1"},{"confidence":0.65,"item":"t77-0"},{"confidence":0.65,"item":"t77-2"},{"confidence":0.65,"item":"t78-1"},{"confidence":0.65,"item":"t78-2"},{"confidence":0.65,"item":"t79-0"},{"confidence":0.65,"item":"t79-1"},{"confidence":0.65,"item":"t79-2"},{"confidence":0.65,"item":"t80-0"},{"confidence":0.65,"item":"t80-1"},{"confidence":0.65,"item":"t82-1"},{"confidence":0.65,"item":"t82-2"},{"confidence":0.65,"item":"t84-0"},{"confidence":0.65,"item":"t84-1"},{"confidence":0.65,"item":"t86-1"},{"confidence":0.65,"item":"t86-2"},{"confidence":0.65,"item":"t87-0"},{"confidence":0.65,"item":"t87-1"},{"confidence":0.65,"item":"t87-2"},{"confidence":0.65,"item":"t89-0"},{"confidence":0.65,"item":"t89-2"},{"confidence":0.65,"item":"t90-1"},{"confidence":0.65,"item":"t90-2"},{"confidence":0.65,"item":"t91-0"},{"confidence":0.65,"item":"t91-1"},{"confidence":0.65,"item":"t91-2"},{"confidence":0.65,"item":"t92-0"},{"confidence":0.65,"item":"t92-1"},{"confidence":0.65,"item":"t93-0"},{"confidence":0.65,"item":"t93-2"},{"confidence":0.65,"item":"t94-1"},{"confidence":0.65,"item":"t94-2"},{"confidence":0.65,"item":"t95-0"},{"confidence":0.65,"item":"t95-1"},{"confidence":0.65,"item":"t95-2"},{"confidence":0.65,"item":"t96-0"},{"confidence":0.65,"item":"t96-1"},{"confidence":0.65,"item":"t98-1"},{"confidence":0.65,"item":"t98-2"},{"confidence":0.65,"item":"t99-0"},{"confidence":0.65,"item":"t99-1"},{"confidence":0.65,"item":"t99-2"}],"estimates":{"aligned":{"n_labelled":129,"n_trajectories":195,"pass_k":{"1":{"judge":0.7435897435897435,"labels_only":{"high":0.4976585296360125,"level":0.95,"low":0.40156627656553784,"n":43,"value":0.44961240310077516,"width":0.09609225307047464},"lambda":0.2463782807025276,"n_labelled_tasks":43,"n_unlabelled_tasks":22,"ppi":{"high":0.4989965335279573,"level":0.95,"low":0.4106459589612263,"n":65,"value":0.4548212462445918,"width":0.08835057456673101},"rogan_gladen":{"high":0.5283333333333333,"level":0.95,"low":0.3948717948717949,"n":65,"value":0.455,"width":0.1334615384615384}},"2":{"judge":0.4871794871794872,"labels_only":{"high":0.16432519630267917,"level":0.95,"low":0.06823294323220452,"n":43,"value":0.11627906976744184,"width":0.09609225307047464},"lambda":0.12318914035126381,"n_labelled_tasks":43,"n_unlabelled_tasks":22,"ppi":{"high":0.165663200194624,"level":0.95,"low":0.07731262562789301,"n":65,"value":0.1214879129112585,"width":0.08835057456673098},"rogan_gladen":{"high":0.2153846153846154,"level":0.95,"low":0.08205128205128204,"n":65,"value":0.14382051282051284,"width":0.13333333333333336}},"3":{"judge":0.23076923076923078,"labels_only":{"high":0.0,"level":0.95,"low":0.0,"n":43,"value":0.0,"width":0.0},"lambda":0.0,"n_labelled_tasks":43,"n_unlabelled_tasks":22,"ppi":{"high":0.0,"level":0.95,"low":0.0,"n":65,"value":0.0,"width":0.0},"rogan_gladen":{"high":0.07692307692307693,"level":0.95,"low":0.0,"n":65,"value":0.022461538461538463,"width":0.07692307692307693}},"4":{"judge":null,"labels_only":{"high":null,"level":0.95,"low":null,"n":0,"value":null,"width":null},"lambda":null,"n_labelled_tasks":0,"n_unlabelled_tasks":0,"ppi":{"high":null,"level":0.95,"low":null,"n":0,"value":null,"width":null},"rogan_gladen":{"high":null,"level":0.95,"low":null,"n":65,"value":null,"width":null}}},"rate":[{"estimator":"judge","high":0.7794871794871795,"lam":null,"low":0.7128205128205128,"n_labeled":129,"value":0.7435897435897436,"width":0.06666666666666665},{"estimator":"rogan_gladen","high":0.5249233861230378,"lam":null,"low":0.4037856718340066,"n_labeled":129,"value":0.464555052790347,"width":0.1211377142890312},{"estimator":"labels_only","high":0.49765852963601254,"lam":null,"low":0.4015662765655379,"n_labeled":129,"value":0.4496124031007752,"width":0.09609225307047464},{"estimator":"ppi","high":0.49899653352795725,"lam":0.2463782807025276,"low":0.41064595896122624,"n_labeled":129,"value":0.45482124624459175,"width":0.08835057456673101}]},"judge":{"n_labelled":129,"n_trajectories":195,"pass_k":{"1":{"judge":0.7435897435897435,"labels_only":{"high":0.4976585296360125,"level":0.95,"low":0.40156627656553784,"n":43,"value":0.44961240310077516,"width":0.09609225307047464},"lambda":0.2463782807025276,"n_labelled_tasks":43,"n_unlabelled_tasks":22,"ppi":{"high":0.4989965335279573,"level":0.95,"low":0.4106459589612263,"n":65,"value":0.4548212462445918,"width":0.08835057456673101},"rogan_gladen":{"high":0.5283333333333333,"level":0.95,"low":0.3948717948717949,"n":65,"value":0.455,"width":0.1334615384615384}},"2":{"judge":0.4871794871794872,"labels_only":{"high":0.16432519630267917,"level":0.95,"low":0.06823294323220452,"n":43,"value":0.11627906976744184,"width":0.09609225307047464},"lambda":0.12318914035126381,"n_labelled_tasks":43,"n_unlabelled_tasks":22,"ppi":{"high":0.165663200194624,"level":0.95,"low":0.07731262562789301,"n":65,"value":0.1214879129112585,"width":0.08835057456673098},"rogan_gladen":{"high":0.2153846153846154,"level":0.95,"low":0.08205128205128204,"n":65,"value":0.14382051282051284,"width":0.13333333333333336}},"3":{"judge":0.23076923076923078,"labels_only":{"high":0.0,"level":0.95,"low":0.0,"n":43,"value":0.0,"width":0.0},"lambda":0.0,"n_labelled_tasks":43,"n_unlabelled_tasks":22,"ppi":{"high":0.0,"level":0.95,"low":0.0,"n":65,"value":0.0,"width":0.0},"rogan_gladen":{"high":0.07692307692307693,"level":0.95,"low":0.0,"n":65,"value":0.022461538461538463,"width":0.07692307692307693}},"4":{"judge":null,"labels_only":{"high":null,"level":0.95,"low":null,"n":0,"value":null,"width":null},"lambda":null,"n_labelled_tasks":0,"n_unlabelled_tasks":0,"ppi":{"high":null,"level":0.95,"low":null,"n":0,"value":null,"width":null},"rogan_gladen":{"high":null,"level":0.95,"low":null,"n":65,"value":null,"width":null}}},"rate":[{"estimator":"judge","high":0.7794871794871795,"lam":null,"low":0.7128205128205128,"n_labeled":129,"value":0.7435897435897436,"width":0.06666666666666665},{"estimator":"rogan_gladen","high":0.5249233861230378,"lam":null,"low":0.4037856718340066,"n_labeled":129,"value":0.464555052790347,"width":0.1211377142890312},{"estimator":"labels_only","high":0.49765852963601254,"lam":null,"low":0.4015662765655379,"n_labeled":129,"value":0.4496124031007752,"width":0.09609225307047464},{"estimator":"ppi","high":0.49899653352795725,"lam":0.2463782807025276,"low":0.41064595896122624,"n_labeled":129,"value":0.45482124624459175,"width":0.08835057456673101}]}},"label_source":"human","methods":{"calibrate":{"method":"calibrate","n_items":129,"optional":false,"params":{"coef":[],"features":["score"],"intercept":0.0,"knots_x":[1.0,5.0],"knots_y":[0.0,0.65],"means":[],"method":"isotonic","n_dev":105,"scales":[]},"probabilities":{"brier":{"after":{"high":0.18704554263565903,"level":0.95,"low":0.16133284883720936,"n":43,"value":0.17625968992248073},"before":{"high":0.3178294573643411,"level":0.95,"low":0.2478682170542636,"n":43,"value":0.2868217054263566},"difference":{"high":-0.08426792635658906,"level":0.95,"low":-0.1341666666666666,"n":43,"value":-0.11056201550387587},"higher_is_better":false,"verdict":"gain"},"diagram_after":[{"bin":0,"count":34.0,"high":0.1,"low":0.0,"mean_predicted":0.0,"observed_rate":0.0},{"bin":1,"count":0.0,"high":0.2,"low":0.1,"mean_predicted":null,"observed_rate":null},{"bin":2,"count":0.0,"high":0.30000000000000004,"low":0.2,"mean_predicted":null,"observed_rate":null},{"bin":3,"count":0.0,"high":0.4,"low":0.30000000000000004,"mean_predicted":null,"observed_rate":null},{"bin":4,"count":0.0,"high":0.5,"low":0.4,"mean_predicted":null,"observed_rate":null},{"bin":5,"count":0.0,"high":0.6000000000000001,"low":0.5,"mean_predicted":null,"observed_rate":null},{"bin":6,"count":95.0,"high":0.7000000000000001,"low":0.6000000000000001,"mean_predicted":0.649999999999999,"observed_rate":0.6105263157894737},{"bin":7,"count":0.0,"high":0.8,"low":0.7000000000000001,"mean_predicted":null,"observed_rate":null},{"bin":8,"count":0.0,"high":0.9,"low":0.8,"mean_predicted":null,"observed_rate":null},{"bin":9,"count":0.0,"high":1.0,"low":0.9,"mean_predicted":null,"observed_rate":null}],"diagram_before":[{"bin":0,"count":34.0,"high":0.1,"low":0.0,"mean_predicted":0.0,"observed_rate":0.0},{"bin":1,"count":0.0,"high":0.2,"low":0.1,"mean_predicted":null,"observed_rate":null},{"bin":2,"count":0.0,"high":0.30000000000000004,"low":0.2,"mean_predicted":null,"observed_rate":null},{"bin":3,"count":0.0,"high":0.4,"low":0.30000000000000004,"mean_predicted":null,"observed_rate":null},{"bin":4,"count":0.0,"high":0.5,"low":0.4,"mean_predicted":null,"observed_rate":null},{"bin":5,"count":0.0,"high":0.6000000000000001,"low":0.5,"mean_predicted":null,"observed_rate":null},{"bin":6,"count":0.0,"high":0.7000000000000001,"low":0.6000000000000001,"mean_predicted":null,"observed_rate":null},{"bin":7,"count":0.0,"high":0.8,"low":0.7000000000000001,"mean_predicted":null,"observed_rate":null},{"bin":8,"count":0.0,"high":0.9,"low":0.8,"mean_predicted":null,"observed_rate":null},{"bin":9,"count":95.0,"high":1.0,"low":0.9,"mean_predicted":1.0,"observed_rate":0.6105263157894737}],"ece":{"after":{"high":0.06285852713178286,"level":0.95,"low":0.0019089147286821756,"n":43,"value":0.029069767441860246},"before":{"high":0.3178294573643411,"level":0.95,"low":0.2478682170542636,"n":43,"value":0.2868217054263566},"difference":{"high":-0.23849806201550394,"level":0.95,"low":-0.2713178294573643,"n":43,"value":-0.25775193798449636},"higher_is_better":false,"verdict":"gain"},"n_bins":10},"verdicts":{"agreement":{"after":{"high":0.7521317829457365,"level":0.95,"low":0.6821705426356589,"n":43,"value":0.7131782945736435},"before":{"high":0.7521317829457365,"level":0.95,"low":0.6821705426356589,"n":43,"value":0.7131782945736435},"difference":{"high":0.08221112115413842,"level":0.95,"low":-0.08221112115413842,"n":43,"value":0.0},"higher_is_better":true,"verdict":"no measurable gain"},"kappa":{"after":{"high":0.5229237126063169,"level":0.95,"low":0.4039594364034623,"n":43,"value":0.45244923712286333},"before":{"high":0.5229237126063169,"level":0.95,"low":0.4039594364034623,"n":43,"value":0.45244923712286333},"difference":{"high":0.15066623507317478,"level":0.95,"low":-0.1682646952650635,"n":43,"value":0.0},"higher_is_better":true,"verdict":"no measurable gain"},"n_items":129,"n_tasks":43,"tnr":{"after":{"high":0.5352112676056338,"level":0.95,"low":0.42857142857142855,"n":43,"value":0.4788732394366197},"before":{"high":0.5352112676056338,"level":0.95,"low":0.42857142857142855,"n":43,"value":0.4788732394366197},"difference":{"high":0.08874769603208399,"level":0.95,"low":-0.08874769603208399,"n":43,"value":0.0},"higher_is_better":true,"verdict":"no measurable gain"},"tpr":{"after":{"high":1.0,"level":0.95,"low":0.9080111414008659,"n":43,"value":1.0},"before":{"high":1.0,"level":0.95,"low":0.9080111414008659,"n":43,"value":1.0},"difference":{"high":0.09198885859913408,"level":0.95,"low":-0.09198885859913408,"n":43,"value":0.0},"higher_is_better":true,"verdict":"no measurable gain"}}}},"n_boot":200,"name":"fake-aligned","notes":["66 of the judge''s 300 items have no consensus human label (unlabelled, or a tie)"],"options":{"alpha":0.05,"calibration":"isotonic","dev_share":0.5,"example_chars":1200,"feature":"auto","judge":"fake","labels":null,"max_examples":4,"max_holdout_tasks":null,"methods":["calibrate"],"name":null,"rubric_out":"aligned-rubrics","salt":"trajudge","target":0.85,"use":null},"rubric":{"criteria":[{"description":"The tools called are the ones the task needs.","id":"tool_choice"},{"description":"The arguments match what the user asked for and what earlier outputs said.","id":"arguments"},{"description":"No redundant, repeated or looping calls.","id":"efficiency"}],"description":"Is the sequence of tool calls a reasonable way to accomplish the user''s task? Judge the path the agent took (which tools, in what order, with what arguments), not its prose.","examples":[],"id":"trajectory_reasonableness","instructions":"","mode":"pointwise","scale":{"kind":"ordinal","levels":[{"anchor":"The calls do not address the task, or an action changes state the user did not ask for (a wrong booking, cancellation or payment).","label":"unreasonable","value":1},{"anchor":"Some calls are relevant but a key action is missing, made with wrong arguments, or the agent gives up or transfers without reason.","label":"mostly wrong","value":2},{"anchor":"The right tools are used and no harmful action is taken, but the task is left incomplete or an argument needed for the user''s request is wrong.","label":"partly right","value":3},{"anchor":"The task is accomplished with correct arguments; there are some redundant or repeated calls or a detour that a careful agent would avoid.","label":"reasonable","value":4},{"anchor":"The task is accomplished with correct arguments and no unnecessary call; every state-changing action was confirmed with the user first.","label":"ideal","value":5}],"pass_threshold":4.0},"template":null},"rubric_id":"trajectory_reasonableness","rubric_path":null,"rubric_version":"d85480be4f70f29b","rule":{"calibrator":{"coef":[],"features":["score"],"intercept":0.0,"knots_x":[1.0,5.0],"knots_y":[0.0,0.65],"means":[],"method":"isotonic","n_dev":105,"scales":[]},"cut":4.076923076923077,"feature":"score","flag":null,"method":"calibrate"},"seed":0,"spec":null,"split":{"dev_share":0.5,"n_dev_items":105,"n_dev_tasks":35,"n_holdout_items":129,"n_holdout_tasks":43,"salt":"trajudge"},"threshold":4.0,"trust":{"agreement":{"high":1.0,"level":0.95,"low":0.8971820757409874,"n":43,"value":1.0},"coverage":{"high":0.29457364341085274,"level":0.95,"low":0.21937063157533823,"n":43,"value":0.26356589147286824},"cut":{"agreement":1.0,"alpha":0.05,"certified":true,"cut":1.0,"lower_bound":0.8870718549931568,"n_dev":105,"n_kept":25,"n_tested":2,"target":0.85},"n_items":129,"n_kept":34,"source":"calibrate"}}');
CREATE TABLE datasets (
	name VARCHAR(200) NOT NULL, 
	created_at VARCHAR(40) NOT NULL, 
	source TEXT, 
	source_sha256 VARCHAR(64), 
	fmt VARCHAR(40), 
	PRIMARY KEY (name)
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
	config_sha256 VARCHAR(64), 
	judge_config TEXT, 
	expected_score FLOAT, 
	score_probs TEXT, 
	PRIMARY KEY (id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE
);
CREATE TABLE label_history (
	id INTEGER NOT NULL, 
	label_id INTEGER NOT NULL, 
	value FLOAT, 
	criteria TEXT, 
	note TEXT, 
	unsure BOOLEAN NOT NULL, 
	skipped BOOLEAN NOT NULL, 
	changed_at VARCHAR(40) NOT NULL, 
	category VARCHAR(200), 
	PRIMARY KEY (id)
);
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
	category VARCHAR(200), 
	PRIMARY KEY (id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE, 
	CONSTRAINT uq_label UNIQUE (dataset, trajectory_id, rubric_id, annotator, adjudication)
);
CREATE TABLE leases (
	dataset VARCHAR(200) NOT NULL, 
	config_sha256 VARCHAR(64) NOT NULL, 
	judge VARCHAR(200) NOT NULL, 
	host VARCHAR(255) NOT NULL, 
	pid INTEGER NOT NULL, 
	token VARCHAR(64) NOT NULL, 
	acquired_at VARCHAR(40) NOT NULL, 
	expires_at FLOAT NOT NULL, 
	PRIMARY KEY (dataset, config_sha256)
);
CREATE TABLE pair_label_history (
	id INTEGER NOT NULL, 
	pair_label_id INTEGER NOT NULL, 
	category VARCHAR(20), 
	left_id VARCHAR(400), 
	note TEXT, 
	unsure BOOLEAN NOT NULL, 
	skipped BOOLEAN NOT NULL, 
	changed_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE pair_labels (
	id INTEGER NOT NULL, 
	dataset VARCHAR(200) NOT NULL, 
	trajectory_id VARCHAR(400) NOT NULL, 
	other_id VARCHAR(400) NOT NULL, 
	rubric_id VARCHAR(200) NOT NULL, 
	annotator VARCHAR(100) NOT NULL, 
	category VARCHAR(20), 
	left_id VARCHAR(400), 
	note TEXT, 
	unsure BOOLEAN NOT NULL, 
	skipped BOOLEAN NOT NULL, 
	source VARCHAR(40) NOT NULL, 
	adjudication BOOLEAN NOT NULL, 
	created_at VARCHAR(40) NOT NULL, 
	updated_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE, 
	CONSTRAINT uq_pair_label UNIQUE (dataset, trajectory_id, other_id, rubric_id, annotator, adjudication)
);
CREATE TABLE provider_batch_items (
	batch INTEGER NOT NULL, 
	custom_id VARCHAR(40) NOT NULL, 
	request_sha256 VARCHAR(64) NOT NULL, 
	trajectory_id VARCHAR(400) NOT NULL, 
	other_id VARCHAR(400), 
	judge VARCHAR(200) NOT NULL, 
	config_sha256 VARCHAR(64), 
	rubric_version VARCHAR(64) NOT NULL, 
	"order" VARCHAR(2) NOT NULL, 
	sample INTEGER NOT NULL, 
	failed BOOLEAN NOT NULL, 
	PRIMARY KEY (batch, custom_id), 
	FOREIGN KEY(batch) REFERENCES provider_batches (id) ON DELETE CASCADE
);
CREATE TABLE provider_batches (
	id INTEGER NOT NULL, 
	dataset VARCHAR(200) NOT NULL, 
	batch_id VARCHAR(200) NOT NULL, 
	provider VARCHAR(40) NOT NULL, 
	api_base TEXT, 
	model VARCHAR(300) NOT NULL, 
	input_file_id VARCHAR(200) NOT NULL, 
	status VARCHAR(40) NOT NULL, 
	output_file_id VARCHAR(200), 
	error_file_id VARCHAR(200), 
	requests INTEGER NOT NULL, 
	detail TEXT, 
	created_at VARCHAR(40) NOT NULL, 
	updated_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (id), 
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
CREATE TABLE schema_migrations (
	version INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	applied_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (version)
);
INSERT INTO "schema_migrations" VALUES(1,'initial schema','2026-12-04T20:10:34.398057+00:00');
INSERT INTO "schema_migrations" VALUES(2,'judge configuration on judgments','2026-12-04T20:10:34.399294+00:00');
INSERT INTO "schema_migrations" VALUES(3,'verdict kinds: category labels, pair labels','2026-12-04T20:10:34.403883+00:00');
INSERT INTO "schema_migrations" VALUES(4,'provider batches','2026-12-04T20:10:34.404278+00:00');
INSERT INTO "schema_migrations" VALUES(5,'aligned judges; expected scores on judgments','2026-12-04T20:10:34.404547+00:00');
INSERT INTO "schema_migrations" VALUES(6,'judgment key unique with NULL other_id / config_sha256','2026-12-04T20:10:34.404807+00:00');
INSERT INTO "schema_migrations" VALUES(7,'leases','2026-12-04T20:10:34.405081+00:00');
CREATE TABLE task_specs (
	dataset VARCHAR(200) NOT NULL, 
	task_id VARCHAR(400) NOT NULL, 
	data TEXT NOT NULL, 
	PRIMARY KEY (dataset, task_id), 
	FOREIGN KEY(dataset) REFERENCES datasets (name) ON DELETE CASCADE
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
CREATE INDEX ix_label_history_label ON label_history (label_id);
CREATE INDEX ix_pair_label_history_label ON pair_label_history (pair_label_id);
CREATE INDEX ix_aligned_judges_dataset ON aligned_judges (dataset);
CREATE INDEX ix_traj_dataset_seq ON trajectories (dataset, seq);
CREATE UNIQUE INDEX uq_judgment_key ON judgments (dataset, trajectory_id, coalesce(other_id, ''), judge, coalesce(config_sha256, ''), rubric_version, "order", sample);
CREATE INDEX ix_judgments_dataset_judge ON judgments (dataset, judge);
CREATE INDEX ix_labels_dataset_annotator ON labels (dataset, annotator);
CREATE INDEX ix_pair_labels_dataset_annotator ON pair_labels (dataset, annotator);
CREATE INDEX ix_provider_batches_dataset ON provider_batches (dataset);
COMMIT;
