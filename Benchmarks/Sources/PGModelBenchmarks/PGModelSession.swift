import PostgresNIO

extension PostgresConnection.Configuration {
    /// The session PGModel's own connections have (`PostgresStoreConfiguration.connection`): PostgreSQL's
    /// default search path, where its extensions were created, whatever the role's own setting (the
    /// scripts give the role `pgmodel` the path `public` alone, for psql).
    func pgmodelSession() -> Self {
        var configuration = self
        configuration.options.additionalStartupParameters = [("search_path", "\"$user\", public")]
        return configuration
    }
}
