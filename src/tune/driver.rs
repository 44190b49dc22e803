//! The [`Driver`]: steps one tuner through a run and hands every record to its
//! [`Observer`]s, the same way for every tuner and every front end. `evolve` and `learn`
//! observe with the console, the export file and the records file; the server steps the same
//! driver and writes each record to the store itself (asynchronously, between steps).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::config::TunerConfig;
use super::export::{ExportDocument, ExportError};
use super::tuner::{Ask, StepControl, Tuner};
use crate::search::Budget;
use crate::tune::{ConfigError, GenerationRecord, GenerationSummary, JobList, StopReason};

/// Why a driven run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

// A drive fails on the user's config or document as those errors do, and on the disk as a
// failure of the machine.
inventory::submit! { crate::game::UserErrorKind::with(|e| match e.downcast_ref::<DriveError>()? {
    DriveError::Config(c) => Some(c),
    DriveError::Export(x) => Some(x),
    DriveError::Io { .. } => None,
}) }

impl DriveError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> DriveError {
        DriveError::Io {
            what: what.into(),
            source,
        }
    }
}

/// Something that follows a run record by record.
pub trait Observer: Send {
    /// The record a step just made.
    fn record(&mut self, config: &TunerConfig, record: &GenerationRecord)
        -> Result<(), DriveError>;
}

/// How a driven run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The tuner finished, for this reason.
    Finished(StopReason),
    /// The control's `go_on` said stop (Ctrl-C, a processor-time budget) after a record.
    Stopped,
}

/// What a driven run needs next ([`Driver::next`]).
#[derive(Debug)]
pub(crate) enum Next {
    /// Games to play, whose points go back through `Driver::tell`.
    Games(JobList),
    /// The step's record, shown to the observers.
    Record(Box<GenerationRecord>),
    /// The step was cancelled; its record was dropped.
    Cancelled,
    /// The run has finished.
    Finished,
}

/// What a step played here made ([`Driver::step`]).
#[derive(Debug)]
pub enum Step<'a> {
    /// The step's record, shown to the observers and kept as `Driver::last`.
    Record(&'a GenerationRecord),
    /// The step was cancelled: its record was dropped, and `Driver::last` is still the one
    /// before.
    Cancelled,
    /// The run has finished.
    Finished,
}

/// [`Next`] without the borrow.
enum Advanced {
    Games(JobList),
    Recorded,
    Cancelled,
    Finished,
}

/// One run of one tuner.
pub struct Driver {
    config: TunerConfig,
    tuner: Box<dyn Tuner>,
    last: Option<GenerationRecord>,
}

impl Driver {
    /// A run of `config` from its first record, or after `last` (see [`TunerConfig::open`]: call
    /// it on the rayon pool the run is to use).
    pub fn open(
        config: TunerConfig,
        last: Option<GenerationRecord>,
    ) -> Result<Driver, ConfigError> {
        Driver::open_within(config, last.into_iter().collect(), &Budget::unlimited())
    }

    /// A run of `config` after `records`, its records so far, oldest first (all of them when
    /// [`TunerConfig::resumes_from_all`], else at least the last), whose preparation stops once
    /// `cancel` is set (see [`TunerConfig::open_within`]); the driver then means nothing and is
    /// to be dropped.
    pub fn open_within(
        config: TunerConfig,
        mut records: Vec<GenerationRecord>,
        cancel: &Budget,
    ) -> Result<Driver, ConfigError> {
        let tuner = config.open_after(&records, cancel)?;
        Ok(Driver {
            config,
            tuner,
            last: records.pop(),
        })
    }

    pub fn config(&self) -> &TunerConfig {
        &self.config
    }

    /// How far a whole run goes ([`Tuner::length`]).
    pub(crate) fn length(&self) -> u64 {
        self.tuner.length()
    }

    /// The last record made (or resumed from).
    pub(crate) fn last(&self) -> Option<&GenerationRecord> {
        self.last.as_ref()
    }

    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        self.tuner.stop_reason()
    }

    /// Makes the next record, playing its games here, and shows it to `observers`.
    pub fn step(
        &mut self,
        control: &StepControl,
        observers: &mut [&mut dyn Observer],
    ) -> Result<Step<'_>, DriveError> {
        loop {
            match self.advance(control, observers)? {
                Advanced::Games(list) => {
                    let points = self.tuner.play_here(&list);
                    self.tuner.tell(points);
                }
                Advanced::Recorded => {
                    return Ok(self.last.as_ref().map_or(Step::Finished, Step::Record))
                }
                Advanced::Cancelled => return Ok(Step::Cancelled),
                Advanced::Finished => return Ok(Step::Finished),
            }
        }
    }

    /// What the run needs next, for a caller that plays the games somewhere else (the
    /// server's runner, on the job queue): games to play and `Driver::tell` the points of,
    /// or the step's record, already shown to `observers`, or the end of the run.
    pub(crate) fn next(
        &mut self,
        control: &StepControl,
        observers: &mut [&mut dyn Observer],
    ) -> Result<Next, DriveError> {
        Ok(match self.advance(control, observers)? {
            Advanced::Games(list) => Next::Games(list),
            Advanced::Recorded => match &self.last {
                Some(record) => Next::Record(Box::new(record.clone())),
                None => Next::Finished,
            },
            Advanced::Cancelled => Next::Cancelled,
            Advanced::Finished => Next::Finished,
        })
    }

    /// The points of the games [`Driver::next`] handed out, in job order.
    pub(crate) fn tell(&mut self, points: Vec<f64>) {
        self.tuner.tell(points)
    }

    fn advance(
        &mut self,
        control: &StepControl,
        observers: &mut [&mut dyn Observer],
    ) -> Result<Advanced, DriveError> {
        let record = match self.tuner.ask(control) {
            Ask::Games(list) => return Ok(Advanced::Games(list)),
            Ask::Finished => return Ok(Advanced::Finished),
            Ask::Record(record) => record,
        };
        // A cancelled step's record is partial: nobody sees it, and a resumed or summarised
        // run goes on from the record before.
        if control.cancel().is_stopped() {
            return Ok(Advanced::Cancelled);
        }
        for observer in observers.iter_mut() {
            observer.record(&self.config, &record)?;
        }
        self.last = Some(*record);
        Ok(Advanced::Recorded)
    }

    /// Steps until the tuner finishes or `control` says stop after a record.
    pub fn run(
        &mut self,
        control: &StepControl,
        observers: &mut [&mut dyn Observer],
    ) -> Result<Ended, DriveError> {
        loop {
            match self.step(control, observers)? {
                Step::Record(_) => {}
                Step::Cancelled => return Ok(Ended::Stopped),
                Step::Finished => {
                    return Ok(Ended::Finished(
                        self.stop_reason().unwrap_or(StopReason::Generations),
                    ))
                }
            }
            // The step's record is the driver's last now.
            let Some(record) = &self.last else {
                return Ok(Ended::Stopped);
            };
            if let Some(reason) = record.stop {
                return Ok(Ended::Finished(reason));
            }
            let position = self.config.spec().position(record);
            if !control.go_on(position) {
                return Ok(Ended::Stopped);
            }
        }
    }
}

/// Keeps the run's export document on disk, rewritten after every record (atomically, so an
/// interruption never leaves half a file), and in memory for the caller's summary.
pub struct ExportFile {
    path: PathBuf,
    history: Vec<GenerationSummary>,
    document: Option<ExportDocument>,
}

impl ExportFile {
    pub fn new(path: impl Into<PathBuf>) -> ExportFile {
        ExportFile {
            path: path.into(),
            history: Vec::new(),
            document: None,
        }
    }

    /// The document as last written.
    pub fn document(&self) -> Option<&ExportDocument> {
        self.document.as_ref()
    }
}

impl Observer for ExportFile {
    fn record(
        &mut self,
        config: &TunerConfig,
        record: &GenerationRecord,
    ) -> Result<(), DriveError> {
        if config.spec().keeps_curve() {
            self.history.push(record.summary());
        }
        let doc = config.export_with_history(self.history.clone(), record)?;
        write_atomically(&self.path, doc.to_json_pretty().as_bytes())?;
        self.document = Some(doc);
        Ok(())
    }
}

/// Keeps every record in memory, in order.
impl Observer for Vec<GenerationRecord> {
    fn record(&mut self, _: &TunerConfig, record: &GenerationRecord) -> Result<(), DriveError> {
        self.push(record.clone());
        Ok(())
    }
}

/// Appends every record to a file, one JSON object a line.
pub struct RecordsFile {
    path: PathBuf,
    file: std::fs::File,
}

impl RecordsFile {
    pub(crate) fn create(path: impl Into<PathBuf>) -> Result<RecordsFile, DriveError> {
        let path = path.into();
        let file = std::fs::File::create(&path)
            .map_err(|e| DriveError::io(format!("creating {}", path.display()), e))?;
        Ok(RecordsFile { path, file })
    }
}

impl Observer for RecordsFile {
    fn record(&mut self, _: &TunerConfig, record: &GenerationRecord) -> Result<(), DriveError> {
        let line = serde_json::to_string(record)
            .map_err(|e| DriveError::io(format!("writing {}", self.path.display()), e.into()))?;
        writeln!(self.file, "{line}")
            .map_err(|e| DriveError::io(format!("writing {}", self.path.display()), e))
    }
}

/// Writes `bytes` to `path` through a temporary file beside it, so that readers (and a crash)
/// see the old file or the new one, never half of one.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), DriveError> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = Path::new(&tmp_name);
    std::fs::write(tmp, bytes)
        .map_err(|e| DriveError::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(tmp, path).map_err(|e| DriveError::io(format!("writing {}", path.display()), e))
}
