"""GitHub: an issue URL read into a problem statement, its repository cloned, and the episode's
patch pushed as a branch and opened as a pull request (REST API over httpx; see README).

`workflow.issue_workspace` is the entry point; `config.GitHubConfig` the `github` config section.
"""
