import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { dataSourceOptions } from './data-source';
import { PostingLane } from './posting-lane';
import { ReadReplica } from './read-replica';

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ ...dataSourceOptions(config.databaseUrl, config.dbPoolSize), autoLoadEntities: true }),
    }),
  ],
  providers: [ReadReplica, PostingLane],
  exports: [ReadReplica, PostingLane],
})
export class DatabaseModule {}
